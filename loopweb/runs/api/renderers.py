"""The API's JSON renderer: DRF's output, written by orjson (``loopweb.runs.jsonbytes``).

The text is DRF's: compact, UTF-8, datetimes and every other value DRF knows written by DRF's
own hook, and the two line separators JavaScript cannot hold escaped as DRF escapes them. One
difference: a float that is not a number or is infinite (JSON has neither) is written as null,
where DRF's renderer fails the answer.
"""

from rest_framework import renderers

from loopweb.runs import jsonbytes
from loopweb.runs.jsonbytes import DRF_DEFAULT

#: U+2028 and U+2029 in UTF-8, and as DRF writes them; both begin with ``LEAD``.
SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))
LEAD = b"\xe2\x80"


def dumps(value) -> bytes:
    """``value`` as DRF's renderer writes it, compact."""
    text = jsonbytes.dumps(value, DRF_DEFAULT)
    if LEAD in text:  # one scan of a large answer, not one per separator
        for raw, escaped in SEPARATORS:
            text = text.replace(raw, escaped)
    return text


class JSONRenderer(renderers.JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None or self.get_indent(accepted_media_type, renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        return dumps(data)
