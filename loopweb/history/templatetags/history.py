from django import template

from loopweb.history.console import standing_context

register = template.Library()


@register.inclusion_tag("history/_standing.html", takes_context=True)
def standing(context, ladder):
    """The board's standing section: the latest dispatch's heights, cost and the activity."""
    return standing_context(context["request"], ladder)
