import re

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

from loopweb.runs.numbers import MAX_ID, typed_integer

#: A page typed as digits alone, with a digit other than 0: a page number however long.
DIGITS = re.compile(r"0*[1-9][0-9]*")


class Pagination(PageNumberPagination):
    """Pages of 50 by default. ``page`` is an integer of 1 or more and ``pageSize`` one from 1 to
    500: anything else is a 400 naming it (not the first page or the default size: the schema
    says what each takes). A page past the last is a 404, however many digits it has."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 500

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        size = typed_integer(raw, low=1, high=self.max_page_size)
        if size is None:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        f"Must be an integer from 1 to {self.max_page_size}."
                    ]
                }
            )
        return size

    def get_page_number(self, request, paginator):
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if not DIGITS.fullmatch(raw):
            raise ValidationError({self.page_query_param: ["Must be an integer of 1 or more."]})
        digits = raw.lstrip("0")
        # More digits than an id holds: a page past the last, however it is written.
        return typed_integer(digits, low=1) or MAX_ID

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1}
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_page_size,
                }
        return parameters
