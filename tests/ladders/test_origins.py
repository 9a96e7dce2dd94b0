"""A ladder job's origin is built and read in one place (``ladders.origins``)."""

import pytest

from ladders import origins
from ladders.models import Dispatch


def test_an_origin_reads_back_as_its_ladder_dispatch_and_rung():
    built = origins.origin(12, "d_ab", "r_cd")
    assert built == "ladder:12/d_ab/r_cd"
    assert built.startswith(origins.dispatch_prefix(12, "d_ab"))
    assert built.startswith(origins.ladder_prefix(12))
    assert not built.startswith(origins.ladder_prefix(1))
    assert origins.parse(built) == origins.Origin(12, "d_ab", "r_cd")
    assert origins.ladder_id_of(built) == 12


@pytest.mark.parametrize("other", ["manual", "plan:3/x/y", "ladder:x/d/r", "ladder:3/d", ""])
def test_other_origins_name_no_ladder_job(other):
    assert origins.parse(other) is None


def test_a_dispatch_builds_its_jobs_origins_here():
    dispatch = Dispatch(ladder_id=7, dispatch_id="d_1")
    assert dispatch.origin_prefix == origins.dispatch_prefix(7, "d_1")
    assert dispatch.origin_for("r_2") == origins.origin(7, "d_1", "r_2")
