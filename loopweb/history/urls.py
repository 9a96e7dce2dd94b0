from django.urls import path

from loopweb.history import api

urlpatterns = [
    # Before the ladders app's own route: JSON goes on to it, CSV is answered here.
    path("ladders/<int:pk>/progress", api.progress, name="ladder-progress-export"),
    path("ladders/<int:pk>/history", api.HistoryView.as_view(), name="ladder-history"),
    path(
        "ladders/<int:pk>/history/<int:record_id>",
        api.RecordView.as_view(),
        name="ladder-history-record",
    ),
    path("ladders/<int:pk>/compare", api.CompareView.as_view(), name="ladder-compare"),
]
