class Conflict(Exception):
    """The request is valid but the object's state forbids it (answered 409)."""

    def __init__(self, detail: str, code: str = "conflict"):
        super().__init__(detail)
        self.detail = detail
        self.code = code
