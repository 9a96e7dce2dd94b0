from django.urls import path

from signals_app.pages import views

app_name = "signals_console"

urlpatterns = [
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
]
