from django.urls import path

from loopweb.console.views import (
    auth,
    board,
    budgets,
    editor,
    ladders,
    manage,
    queue,
    review_settings,
    runs,
)

app_name = "console"

urlpatterns = [
    path("", ladders.ladder_list, name="ladders"),
    path("login/", auth.SignInView.as_view(), name="login"),
    path("logout/", auth.SignOutView.as_view(), name="logout"),
    path("ladders/new/", editor.ladder_new, name="ladder-new"),
    path("ladders/<int:pk>/", board.board, name="board"),
    path("ladders/<int:pk>/board", board.board_refresh, name="board-refresh"),
    path("ladders/<int:pk>/edit/", editor.ladder_edit, name="ladder-edit"),
    path("ladders/<int:pk>/delete/", editor.ladder_delete, name="ladder-delete"),
    path("ladders/<int:pk>/run", board.run, name="run"),
    path("ladders/<int:pk>/stop", board.stop, name="stop"),
    path(
        "ladders/<int:pk>/stop/cancel-running",
        board.stop_cancel_running,
        name="stop-cancel-running",
    ),
    path("ladders/<int:pk>/retry", board.retry, name="retry"),
    path("ladders/<int:pk>/retry-all", board.retry_all, name="retry-all"),
    path("ladders/<int:pk>/queue/", queue.queue, name="queue"),
    path(
        "ladders/<int:pk>/review-settings/",
        review_settings.review_settings,
        name="review-settings",
    ),
    path("ladders/<int:pk>/slots/<int:index>/<str:rung>/", runs.slot, name="slot"),
    path("runs/<int:pk>/", runs.run_page, name="run-page"),
    path("runs/<int:pk>/review", runs.run_review, name="run-review"),
    path("runs/<int:pk>/overrides", runs.run_overrides, name="run-overrides"),
    path("combinations/", manage.combinations, name="combinations"),
    path("combinations/models/", manage.model_add, name="model-add"),
    path("combinations/models/<int:pk>/", manage.model_launchable, name="model-launchable"),
    path("groups/", manage.groups, name="groups"),
    path("groups/<int:pk>/", manage.group, name="group"),
    path("account/acceptance-rule/", manage.acceptance_rule, name="acceptance-rule"),
    path("budgets/", budgets.budget_list, name="budgets"),
    path("budgets/<int:pk>/", budgets.budget_change, name="budget"),
]
