from django.urls import path

from loopweb.reviewing import api

urlpatterns = [
    path("ladders/<int:pk>/pairwise", api.PairwiseView.as_view(), name="ladder-pairwise"),
    path("ladders/<int:pk>/pairwise/next", api.NextPairView.as_view(), name="ladder-pairwise-next"),
    path(
        "ladders/<int:pk>/pairwise/results",
        api.ResultsView.as_view(),
        name="ladder-pairwise-results",
    ),
    path("ladders/<int:pk>/agreement", api.AgreementView.as_view(), name="ladder-agreement"),
    path(
        "ladders/<int:pk>/disagreements",
        api.DisagreementsView.as_view(),
        name="ladder-disagreements",
    ),
    path("ladders/<int:pk>/backlog", api.SettingsView.as_view(), name="ladder-backlog"),
]
