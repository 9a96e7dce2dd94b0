"""Progress shared by the viewers of a ladder, and never stale.

Each web process keeps a ladder's latest board and the snapshot token taken before it was read
(``loopweb.runs.changes``). Every read first asks the database, in one query, which changes the
board has not seen: none, and the copy is served; some cells, and only the climbers holding them
are computed again, from those cells; the ladder or the catalog, and it is computed afresh. One
viewer per ladder and process updates the board while the others wait, and a waiting viewer is
handed it only when its look began after the viewer's request did: none is served a board older
than its request, whichever process served the write.

A ``version`` is ``<snapshot token>.<jobs under way>.<digest>``: given back (``If-None-Match``,
``?since=``) it is checked against the database alone (``check``, ``since``).
"""

import gzip
import hashlib
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from django.db import connection, transaction

from ladders import access, document, evidence, origins, progress
from ladders.models import Dispatch, DispatchCell, DispatchClimber, DispatchStatus, Ladder
from ladders.progress import Head, Live, Part
from ladders.selectors import ladders_for
from loopweb import telemetry
from loopweb.runs import changes, jsonbytes
from loopweb.runs.jsonbytes import DRF_DEFAULT
from loopweb.runs.models import UNDER_WAY, Change, ChangeHorizon, Job
from loopweb.runs.numbers import typed_integer

UNREAD_FOR = 60.0  # seconds unread before a board is dropped (when another is stored)
KEPT = 32  # boards a process keeps at most (a large ladder's may be megabytes)

_now = time.monotonic


def _encode(value) -> bytes:
    return jsonbytes.dumps(value, DRF_DEFAULT)


@dataclass(slots=True)
class Look:
    """What one query told about a ladder: the snapshot token now, the pruning horizon, the jobs
    under way, and the (id, stamp, key) changes the tokens ``asked`` did not all see."""

    token: str
    horizon: int
    under_way: int
    changes: list[tuple[int, int, str]]
    seen: bool = True  # whether the viewer the look was for may see the ladder
    asked: tuple[str, ...] = ()
    began: float = 0.0  # when (``_now``) the query was sent

    def keys(self) -> set[str]:
        return {key for _, _, key in self.changes}

    def for_token(self, token: str) -> "Look":
        """This look as if asked about ``token`` (one it was asked about) alone."""
        assert token in self.asked, "a look tells only of the tokens it was asked about"
        if self.asked == (token,):
            return self
        unseen = [c for c in self.changes if not changes.visible(c[1], token)]
        return replace(self, changes=unseen, asked=(token,))


@dataclass(slots=True)
class Board:
    ladder_id: int
    dispatch: Dispatch | None
    final: object | None
    head: Head
    parts: list[Part]
    token: str  # of the snapshot this board has seen everything of
    under_way: int
    #: The ladder's row it was computed from: a write to the ladder computes the board afresh.
    ladder: Ladder = field(repr=False)
    #: A live dispatch's parts, its climbers' catalog entries and ids, for a change to read
    #: again only the climbers holding its cells.
    live: Live | None = field(default=None, repr=False)
    figures: dict | None = None
    version: str = ""
    front: bytes = b""  # the encoded board up to its climbers
    by_cell: dict[str, list[int]] = field(default_factory=dict)
    encodings: dict[str, bytes] = field(default_factory=dict, repr=False)  # made once, shared
    looked_at: float = 0.0  # when (``_now``) the look it was computed or checked by began
    #: What readers derive from the whole board (the history's live record), once per board.
    memo: dict = field(default_factory=dict, repr=False)

    @property
    def body(self) -> dict:
        body = progress.body(self.head, self.dispatch, self.parts, runs_under_way=self.under_way)
        body["version"] = self.version
        return body

    @property
    def encoded(self) -> bytes:
        """The whole board encoded, climbers from their own encodings."""
        found = self.encodings.get("json")
        if found is None:
            climbers = b",".join(part.encoded for part in self.parts)
            found = b'%b%b],"version":%b}' % (self.front, climbers, _encode(self.version))
            self.encodings["json"] = found
        return found

    @property
    def gzipped(self) -> bytes:
        found = self.encodings.get("gzip")
        if found is None:
            found = self.encodings["gzip"] = gzip.compress(self.encoded, compresslevel=5, mtime=0)
        return found

    def keys(self) -> list[str]:
        return [changes.ladder_key(self.ladder_id), changes.CATALOG]

    def affected(self, changed: set[str]) -> list[int]:
        """Indexes of the parts holding any of the changed cells."""
        return sorted({i for key in changed for i in self.by_cell.get(key, ())})


@dataclass(slots=True)
class _Slot:
    board: Board | None = None
    read_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)  # held by the one updating


_slots: dict[int, _Slot] = {}
_slots_lock = threading.Lock()


def _slot(ladder_id: int) -> _Slot:
    with _slots_lock:
        return _slots.setdefault(ladder_id, _Slot())


def _look(ladder_id: int, since: str | None, viewer=None, also: str | None = None) -> Look:
    """One query (on PostgreSQL): the snapshot token, the pruning horizon, the ladder's jobs under
    way (``progress.under_way``), the changes of the ladder, the catalog and the dispatch's cells
    the token ``since`` did not see, and whether the ``viewer`` may see the ladder. When ``since``
    did not see some, also those this process's board's token ``also`` did not see (the read that
    follows goes on from them)."""
    began = _now()
    keys = [changes.ladder_key(ladder_id), changes.CATALOG]
    also = also if since and also != since else None
    prefix = f"{origins.ladder_prefix(ladder_id)}%"
    if connection.vendor == "postgresql":
        sees = access.SEES_SQL if viewer is not None else "true"
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                SELECT pg_current_snapshot()::text, {sees},
                  COALESCE((SELECT max(pruned_below) FROM {ChangeHorizon._meta.db_table}), 0),
                  (SELECT count(*) FROM {Job._meta.db_table}
                   WHERE status = ANY(%(under_way)s) AND origin LIKE %(prefix)s),
                  client.found,
                  CASE WHEN %(also)s::text IS NULL OR client.found::text = '[]' THEN NULL
                  ELSE {_unseen_sql("also", seen_by="since")} END
                FROM (SELECT CASE WHEN %(since)s::text IS NULL THEN '[]'::json
                      ELSE {_unseen_sql("since")} END AS found) AS client
                """,  # noqa: S608 - only models' table names are formatted in
                {
                    "under_way": list(UNDER_WAY),
                    "prefix": prefix,
                    "since": changes.snapshot_of(since) if since else None,
                    "since_floor": changes.floor_of(since) if since else None,
                    "also": changes.snapshot_of(also) if also else None,
                    "also_floor": changes.floor_of(also) if also else None,
                    "keys": keys,
                    **(
                        access.sees_params(viewer, ladder_id)
                        if viewer is not None
                        else {"ladder": ladder_id}
                    ),
                },
            )
            current, seen, horizon, under_way, found, found_also = cursor.fetchone()
        entries = [tuple(r) for r in found]
        if found_also is not None:
            entries += [tuple(r) for r in found_also]
        asked = tuple(t for t in (since, also if found_also is not None else None) if t)
        return Look(changes.token_of(current), horizon, under_way, entries, seen, asked, began)
    token = changes.counter_token()
    entries, asked = [], ()
    if since:
        cells = DispatchCell.objects.filter(dispatch__ladder_id=ladder_id)
        every = DispatchClimber.objects.filter(  # as ``_UNPINNED_SQL``
            dispatch__ladder_id=ladder_id, dispatch__status=DispatchStatus.RUNNING, pinned_key=""
        ).exists()
        entries, asked = changes.unseen(since, keys=keys, cells=cells, every=every), (since,)
        if also and entries:
            entries += [
                e
                for e in changes.unseen(also, keys=keys, cells=cells, every=every)
                if changes.visible(e[1], since)
            ]
            asked = (since, also)
    seen = viewer is None or ladders_for(viewer).filter(pk=ladder_id).exists()
    under_way = progress.under_way(ladder_id)
    return Look(token, changes.horizon(), under_way, entries, seen, asked, began)


#: Whether the running dispatch has a climber not pinned yet: its cells are no dispatch cell
#: until a pass pins them, so every change counts until then.
_UNPINNED_SQL = f"""(SELECT EXISTS (
    SELECT 1 FROM {DispatchClimber._meta.db_table} AS dc
    JOIN {Dispatch._meta.db_table} AS dd ON dd.id = dc.dispatch_id
    WHERE dd.ladder_id = %(ladder)s AND dd.status = 'running' AND dc.pinned_key = ''))"""  # noqa: S608


def _unseen_sql(token: str, seen_by: str | None = None) -> str:
    """The changes of the ladder, the catalog and the dispatch's cells the snapshot parameter
    ``token`` did not see (and ``seen_by`` did), as a JSON array of (id, stamp, key)."""
    seen = (
        f"AND pg_visible_in_snapshot(c.stamp::text::xid8, %({seen_by})s::pg_snapshot)"
        if seen_by
        else ""
    )
    return f"""COALESCE((
        SELECT json_agg(json_build_array(c.id, c.stamp, c.key))
        FROM {Change._meta.db_table} AS c
        WHERE c.stamp >= %({token}_floor)s::bigint
        AND NOT pg_visible_in_snapshot(c.stamp::text::xid8, %({token})s::pg_snapshot) {seen}
        AND (c.key = ANY(%(keys)s) OR {_UNPINNED_SQL} OR EXISTS (
          SELECT 1 FROM {DispatchCell._meta.db_table} AS d
          WHERE d.cell_key = c.key AND d.dispatch_id = (
            SELECT id FROM {Dispatch._meta.db_table} WHERE ladder_id = %(ladder)s)
          -- OFFSET 0: each change probes the cells' index, never a hash of all of them.
          OFFSET 0))), '[]')"""  # noqa: S608 - only models' table names are formatted in


def _parse(version: str | None) -> tuple[str, int] | None:
    """(snapshot token, jobs under way) of a version a client gave back, or None."""
    try:
        token, under_way, _ = (version or "").strip().strip('"').split(".")
    except ValueError:
        return None
    jobs = typed_integer(under_way)
    if jobs is None or changes.floor_of(token) is None:
        return None
    return token, jobs


#: A version as written (quoted or not): a snapshot token (``xmin_xmax_running`` or
#: ``n<counter>``), the jobs under way, a digest.
VERSION_PATTERN = (
    r'^"?(n[0-9]{1,18}|[0-9]{1,18}_[0-9]{1,18}_([0-9]{1,18}(-[0-9]{1,18})*)?)'
    r'\.[0-9]{1,18}\.[0-9a-f]{1,16}"?$'
)
_VERSION = re.compile(VERSION_PATTERN)


def readable(version: str) -> bool:
    """Whether ``version`` is written as a version is (one too old to follow still is)."""
    return _VERSION.match(version) is not None


def _followable(look: Look, token: str, board: Board | None = None) -> bool:
    """Whether what changed after ``token`` can be told: nothing pruned that it may not have
    seen, and (for a board) neither the ladder nor the catalog changed."""
    if changes.floor_of(token) < look.horizon:
        return False
    return board is None or not (look.keys() & set(board.keys()))


@dataclass(slots=True)
class Check:
    """A client's version checked in one look: the version again when nothing its board shows
    changed since (a 304), and the look, for the read that follows (``read``, ``since``)."""

    unchanged: str | None
    look: Look | None


def check(viewer, ladder_id: int, version: str | None) -> Check:
    """Whether the viewer may see the ladder and nothing its board shows changed since
    ``version``: a 304 in one query, which also asks what this process's board has not seen, so
    that the read that follows a change needs no look of its own."""
    parsed = _parse(version)
    if parsed is None:
        return Check(None, None)
    token, under_way = parsed
    slot = _slots.get(ladder_id)  # not made here: any id may be asked about
    board = slot.board if slot is not None else None
    look = _look(ladder_id, token, viewer, also=board.token if board is not None else None)
    if not look.seen:
        return Check(None, None)  # the read goes on as any other, and answers 404
    client = look.for_token(token)
    if client.changes or look.under_way != under_way or not _followable(client, token):
        return Check(None, look)
    return Check(version.strip().strip('"'), look)


@contextmanager
def one_snapshot():
    """Everything read inside reads one snapshot (under READ COMMITTED a push committing between
    two statements of a board's evidence made a state that never existed): a read-only
    REPEATABLE READ transaction on PostgreSQL; inside a transaction, that one's. (SQLite reads as
    it is: a transaction would hold the file's lock.)"""
    if connection.in_atomic_block or connection.vendor != "postgresql":
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _full(ladder_id: int, look: Look) -> Board:
    with telemetry.PROGRESS_SECONDS.labels(kind="full").time(), one_snapshot():
        ladder = Ladder.objects.select_related("dispatch").get(pk=ladder_id)
        dispatch = progress.dispatch_of(ladder)
        final = progress.final_of(dispatch) if dispatch else None
        live = progress.live(ladder, dispatch) if dispatch and final is None else None
        parts = live.parts if live else progress.parts_of(ladder, dispatch) if dispatch else []
        board = Board(
            ladder.pk, dispatch, final, progress.head(ladder), parts, look.token, look.under_way,
            ladder, live,
        )  # fmt: skip
    for i, part in enumerate(parts):
        for key in part.cells:
            board.by_cell.setdefault(key, []).append(i)
    _finish(board)
    return board


def _partial(board: Board, look: Look) -> Board:
    """The board with the climbers holding the changed cells computed again (an ended one's
    parts never change; the jobs it launched still in flight do)."""
    ladder, live, parts = board.ladder, board.live, board.parts
    with telemetry.PROGRESS_SECONDS.labels(kind="partial").time(), one_snapshot():
        if board.final is not None:
            parts = progress.frozen_parts(board.dispatch, board.final, previous=board.parts)
            progress.count_unreviewed(ladder, parts)
        elif affected := board.affected(look.keys()):
            assert live is not None  # a live dispatch's board keeps what it was computed from
            if any(not parts[i].pinned for i in affected):
                return _full(board.ladder_id, look)
            try:
                live = progress.after_change(ladder, board.dispatch, live, affected)
            except evidence.Stale:
                return _full(board.ladder_id, look)
            parts = live.parts
    new = replace(
        board, parts=parts, token=look.token, under_way=look.under_way, live=live,
        encodings={}, memo={},
    )  # fmt: skip
    _finish(new)
    return new


def _finish(board: Board) -> None:
    """Sum the figures, encode the front, and name the board by a digest of the front and of
    each climber's encoding."""
    ladder = dict(board.head.ladder)
    figures = None
    if board.dispatch is not None:
        figures = progress.figures(board.dispatch, board.parts, runs_under_way=board.under_way)
        ladder["status"] = figures["status"]
    board.figures = figures
    front = b'{"schemaVersion":%d,"ladder":%b,"rungs":%b,"dispatch":%b,"climbers":[' % (
        document.SCHEMA_VERSION, _encode(ladder), _encode(board.head.rungs), _encode(figures)
    )  # fmt: skip
    digest = hashlib.blake2b(front, digest_size=8)
    for part in board.parts:
        digest.update(part.digest)
    board.version = f"{board.token}.{board.under_way}.{digest.hexdigest()}"
    board.front = front


def read(ladder: Ladder | int, look: Look | None = None) -> Board:
    """The board of the ladder (or of this id: ``Ladder.DoesNotExist`` if none), current as of
    this call, or of ``look``, one this request made (``check``). Inside a transaction it is
    computed afresh and not shared: it may hold that transaction's own writes."""
    ladder_id = ladder if isinstance(ladder, int) else ladder.pk
    if connection.in_atomic_block:
        return _full(ladder_id, _look(ladder_id, None))
    now = _now()
    arrived = look.began if look is not None else now
    slot = _slot(ladder_id)
    slot.read_at = now
    with slot.lock:
        board = slot.board
        if board is not None and board.looked_at > arrived:
            return board  # from a look begun after this request: it holds every write before it
        if look is not None and (board is None or board.token in look.asked):
            looked_at = look.began
            if board is not None:
                look = look.for_token(board.token)
        else:
            looked_at = _now()
            look = _look(ladder_id, board.token if board is not None else None)
        if board is None or not _followable(look, board.token, board):
            board = _full(ladder_id, look)
        elif look.changes or look.under_way != board.under_way:
            board = _partial(board, look)
        else:  # looked at again: seen up to the new snapshot, its version and encodings kept
            board = replace(board, token=look.token)
        board.looked_at = looked_at
        _keep(slot, board)
        return board


def _keep(slot: _Slot, board: Board) -> None:
    """Keep the board; forget those unread for ``UNREAD_FOR`` seconds and, beyond ``KEPT``, the
    least recently read."""
    with _slots_lock:
        slot.board, now = board, _now()
        others = sorted(_slots.items(), key=lambda entry: entry[1].read_at)
        boards = sum(1 for _, other in others if other.board is not None)
        for ladder_id, other in others:
            if other is slot:
                continue
            if other.board is not None and (boards > KEPT or now - other.read_at > UNREAD_FOR):
                other.board, boards = None, boards - 1
            if other.board is None and not other.lock.locked():
                del _slots[ladder_id]  # a viewer holding it still finishes with it


def changed_since(board: Board, version: str | None, look: Look | None = None) -> list[int] | None:
    """Indexes of the board's climbers changed after ``version``'s snapshot; None when it cannot
    be followed. ``look``: the one the board was read with, if any."""
    parsed = _parse(version)
    if parsed is None:
        return None
    token, _ = parsed
    if look is not None and look.token == board.token and token in look.asked:
        look = look.for_token(token)
    else:
        look = _look(board.ladder_id, token)
    if not _followable(look, token, board):
        return None
    if board.final is not None:
        return []  # an ended dispatch's climbers never change
    return board.affected(look.keys())


def since(board: Board, version: str | None, look: Look | None = None) -> bytes:
    """The board encoded with only the climbers changed since ``version``, named by ``since``;
    the whole board, ``since`` null, when that version cannot be followed."""
    indexes = changed_since(board, version, look)
    if indexes is None:
        climbers, held = [part.encoded for part in board.parts], None
    else:
        climbers, held = [board.parts[i].encoded for i in indexes], version.strip().strip('"')
    return b'%b%b],"version":%b,"since":%b}' % (
        board.front, b",".join(climbers), _encode(board.version), _encode(held)
    )  # fmt: skip


def reset() -> None:
    """Forget every board this process keeps (tests)."""
    with _slots_lock:
        _slots.clear()
