"""A driver client for Loopweb: claim jobs, report their status, push their runs.

Importable without Django; it needs only the standard library. See docs/drivers.md.
"""

from loopweb.driver.client import Driver, DriverError, Failure, Job, RateLimited, RunResult

__all__ = ["Driver", "DriverError", "Failure", "Job", "RateLimited", "RunResult"]
