"""The API's JSON renderer: DRF's output, encoded by orjson.

A record of a 200 × 50 ladder is about a megabyte of JSON; DRF's encoder (the standard library's,
with a Python hook per unknown value) spends about 23 ms writing it, orjson about 4 ms. The text is
the same: compact, UTF-8, datetimes and every other value DRF knows written by DRF's own hook, and
the two line separators JavaScript cannot hold escaped as DRF escapes them. What orjson cannot
write (an integer past 64 bits) is written by DRF's encoder. One difference: a float that is not a
number or is infinite (JSON has neither) is written as null, where DRF's encoder fails the answer.
"""

import orjson
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
#: U+2028 and U+2029 in UTF-8, and as DRF writes them; both begin with ``LEAD``.
SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))
LEAD = b"\xe2\x80"
#: How DRF writes what JSON has no type for (datetimes, decimals, lazy text, …).
DRF_DEFAULT = JSONEncoder().default


def dumps(value) -> bytes:
    """``value`` as DRF's compact JSON, or ``orjson.JSONEncodeError`` (a ``TypeError``) where
    orjson cannot write it."""
    text = orjson.dumps(value, default=DRF_DEFAULT, option=OPTIONS)
    if LEAD in text:  # one scan of a large answer, not one per separator
        for raw, escaped in SEPARATORS:
            text = text.replace(raw, escaped)
    return text


class JSONRenderer(renderers.JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None or self.get_indent(accepted_media_type, renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            return dumps(data)
        except orjson.JSONEncodeError:
            # An integer past 64 bits, or a value neither encoder knows (DRF's raises for it).
            return super().render(data, accepted_media_type, renderer_context)
