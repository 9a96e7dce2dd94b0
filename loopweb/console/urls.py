from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

app_name = "console"

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False), name="ladders"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
