from django.urls import path

from signals_app.api import views as api

app_name = "signals_api"

urlpatterns = [
    path("runs/<int:pk>/signals", api.RunSignalsView.as_view(), name="run-signals"),
    path("runs/<int:pk>/outcome", api.RunOutcomeView.as_view(), name="run-outcome"),
    path("signals/events", api.LateEventView.as_view(), name="late-events"),
    path("account/acceptance-rule", api.AcceptanceRuleView.as_view(), name="acceptance-rule"),
]
