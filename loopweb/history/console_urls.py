from django.urls import path

from loopweb.history import console

app_name = "history"

urlpatterns = [
    path("ladders/<int:pk>/history/", console.history, name="history"),
    path("ladders/<int:pk>/history/<int:record_id>/", console.record_page, name="record"),
    path(
        "ladders/<int:pk>/history/<int:record_id>/slots/<int:index>/<str:rung>/",
        console.record_slot,
        name="record-slot",
    ),
    path("ladders/<int:pk>/compare/", console.compare, name="compare"),
    path("ladders/<int:pk>/standing", console.board_standing, name="standing"),
]
