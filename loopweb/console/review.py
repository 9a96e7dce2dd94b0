"""A run as the review queue shows it: a summary of its record, its checklist and artifacts.

A run record is free JSON pushed by a driver, so every value is read defensively and only
http(s) artifact addresses become links.
"""

from urllib.parse import urlsplit

SAFE_SCHEMES = ("http", "https")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _number(value, fmt) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return fmt(value)


METRICS = [
    ("runtime_s", "Runtime", lambda v: f"{v:,.1f} s"),
    ("wall_ms", "Wall time", lambda v: f"{v / 1000:,.1f} s"),
    ("input_tokens", "Input tokens", lambda v: f"{v:,.0f}"),
    ("output_tokens", "Output tokens", lambda v: f"{v:,.0f}"),
    ("usd_micros", "Cost", lambda v: f"${v / 1_000_000:,.4f}"),
]


def safe_url(url) -> str | None:
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in SAFE_SCHEMES and parts.netloc else None


def run_summary(run, checklist: list) -> dict:
    record = _dict(run.record)
    marks = _dict(record.get("checklist"))
    items = [
        {
            "id": item.get("id"),
            "text": item.get("text") or item.get("id"),
            "critical": bool(item.get("critical")),
            "passed": marks.get(item.get("id")),
        }
        for item in checklist
        if isinstance(item, dict)
    ]
    toolchain = _dict(record.get("toolchain"))
    metrics = _dict(record.get("metrics"))
    artifacts = record.get("artifacts") if isinstance(record.get("artifacts"), list) else []
    return {
        "checklist": items,
        "passed": sum(1 for i in items if i["passed"] is True),
        "build": toolchain.get("build"),
        "metrics": [
            (label, _number(metrics[key], fmt)) for key, label, fmt in METRICS if key in metrics
        ],
        "artifacts": [
            {
                "name": str(a.get("name") or a.get("url") or "artifact"),
                "url": safe_url(a.get("url")),
            }
            for a in artifacts
            if isinstance(a, dict)
        ],
    }
