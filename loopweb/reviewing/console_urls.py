from django.urls import path

from loopweb.reviewing import console

app_name = "reviewing"

urlpatterns = [
    path("ladders/<int:pk>/pairwise/", console.pairwise, name="pairwise"),
    path("ladders/<int:pk>/pairwise/results/", console.results, name="results"),
    path("ladders/<int:pk>/agreement/", console.agreement, name="agreement"),
    path("ladders/<int:pk>/disagreements/", console.disagreements, name="disagreements"),
    path("ladders/<int:pk>/backlog/", console.backlog_alert, name="backlog"),
]
