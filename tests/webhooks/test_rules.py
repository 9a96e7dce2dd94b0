"""The pure rules: which answers are retried and after how long, and which targets a
deployment allows."""

import hashlib
import hmac
import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopweb.webhooks import policy
from loopweb.webhooks.policy import Answer, next_delay
from loopweb.webhooks.sender import signature
from loopweb.webhooks.targets import URL, Allowlist, host_of, url_problem


@pytest.mark.parametrize(
    ("answer", "retried"),
    [
        (Answer(code=200), False),
        (Answer(code=204), False),
        (Answer(code=301), False),
        (Answer(code=400), False),
        (Answer(code=401), False),
        (Answer(code=404), False),
        (Answer(code=408), True),
        (Answer(code=429), True),
        (Answer(code=500), True),
        (Answer(code=502), True),
        (Answer(code=599), True),
        (Answer(error=policy.TIMEOUT), True),
        (Answer(error=policy.NETWORK), True),
        (Answer(error=policy.REFUSED), False),
    ],
)
def test_what_is_tried_again(answer, retried):
    delay = next_delay(answer, attempt=1, max_attempts=6, base=30, single=False)
    assert (delay is not None) is retried


def test_the_backoff_doubles_and_stops_at_the_limit():
    failing = Answer(code=500)
    delays = [
        next_delay(failing, attempt=n, max_attempts=6, base=30, single=False) for n in range(1, 7)
    ]
    assert delays == [30, 60, 120, 240, 480, None]


def test_a_single_attempt_is_never_retried():
    assert next_delay(Answer(code=500), attempt=1, max_attempts=6, base=30, single=True) is None


def test_retry_after_is_honoured_up_to_an_hour():
    slow = Answer(code=429, retry_after=600)
    assert next_delay(slow, attempt=1, max_attempts=6, base=30, single=False) == 600
    huge = Answer(code=503, retry_after=10**9)
    assert next_delay(huge, attempt=1, max_attempts=6, base=30, single=False) == 3600
    short = Answer(code=503, retry_after=1)
    assert next_delay(short, attempt=2, max_attempts=6, base=30, single=False) == 60


def test_the_signature_is_an_hmac_of_the_timestamp_and_the_body():
    expected = hmac.new(b"whsec_k", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    assert signature("whsec_k", 1700000000, b'{"a":1}') == f"sha256={expected}"


NOTHING = Allowlist()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fc00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "224.0.0.1",
    ],
)
def test_loopback_private_and_other_non_public_addresses_are_refused(address):
    assert not NOTHING.allows_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700::1111"])
def test_public_addresses_are_allowed(address):
    assert NOTHING.allows_address(ipaddress.ip_address(address))


def test_a_deployment_lists_names_suffixes_addresses_and_networks():
    allowlist = Allowlist.parse(["hooks.internal", ".corp", "127.0.0.1", "10.0.0.0/8", " "])
    assert allowlist.lists_name("hooks.internal") and allowlist.lists_name("HOOKS.internal.")
    assert allowlist.lists_name("ci.corp") and not allowlist.lists_name("corp.evil")
    assert allowlist.allows_address(ipaddress.ip_address("127.0.0.1"))
    assert allowlist.allows_address(ipaddress.ip_address("10.9.8.7"))
    assert not allowlist.allows_address(ipaddress.ip_address("127.0.0.2"))
    assert url_problem("http://hooks.internal/x", allowlist) is None
    assert url_problem("http://127.0.0.1:8080/x", allowlist) is None
    assert url_problem("http://192.168.0.1/x", allowlist)[0] == "host_not_allowed"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://hooks.example.com/a?b#c", "hooks.example.com"),
        ("http://Hooks.Example.com.:8080", "hooks.example.com"),
        ("http://10.0.0.1?x=1", "10.0.0.1"),
        ("http://a#b", "a"),
    ],
)
def test_the_host_of_a_url(url, host):
    assert URL.match(url) and host_of(url) == host


@given(st.text(max_size=80))
def test_any_text_is_judged_never_crashes(text):
    problem = url_problem(text, NOTHING)
    assert problem is None or problem[0] in {"invalid", "host_not_allowed"}
    if problem is None:
        assert text.startswith(("http://", "https://"))
