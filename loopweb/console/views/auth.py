from django.contrib import messages
from django.contrib.auth import views as auth_views


class SignInView(auth_views.LoginView):
    redirect_authenticated_user = True


class SignOutView(auth_views.LogoutView):
    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You have signed out.")
        return response
