"""When an attempt that did not succeed is tried again, and how long after. Pure."""

from dataclasses import dataclass

#: What went wrong without an HTTP answer.
TIMEOUT = "timeout"  # no answer within the timeout: tried again
NETWORK = "network"  # the name did not resolve, the connection was refused or cut: tried again
REFUSED = "refused"  # the target is not allowed (or not a valid URL): never tried again

#: Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER = 3600.0


@dataclass(frozen=True, slots=True)
class Answer:
    """How one attempt ended: an HTTP status, or an error kind with no status."""

    code: int | None = None
    error: str = ""  # TIMEOUT, NETWORK or REFUSED when there is no code
    retry_after: float | None = None  # seconds, from a 429 or 503's Retry-After

    @property
    def succeeded(self) -> bool:
        return self.code is not None and 200 <= self.code < 300


def retryable(answer: Answer) -> bool:
    """5xx, 408, 429, timeouts and network failures are tried again; other answers (4xx,
    redirects, which are not followed) and refused targets are final."""
    if answer.code is None:
        return answer.error in (TIMEOUT, NETWORK)
    return answer.code >= 500 or answer.code in (408, 429)


def backoff(attempt: int, base: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1 for the first): base, 2×base, 4×…"""
    return base * 2 ** (attempt - 1)


def next_delay(
    answer: Answer, *, attempt: int, max_attempts: int, base: float, single: bool
) -> float | None:
    """Seconds until the next attempt, or None when this one is the last. ``single``: the
    attempt is the only one it gets (a ping, a redelivery, a failing subscription's event)."""
    if answer.succeeded or single or attempt >= max_attempts or not retryable(answer):
        return None
    delay = backoff(attempt, base)
    if answer.retry_after is not None:
        delay = max(delay, min(answer.retry_after, MAX_RETRY_AFTER))
    return delay
