from django.urls import path

from evalsets.pages import views

app_name = "evalsets"

urlpatterns = [
    path("proposals/", views.proposal_list, name="proposals"),
    path("proposals/<int:pk>/", views.proposal_detail, name="proposal"),
    path("evalsets/", views.evalset_list, name="evalsets"),
    path("evalsets/<str:hash>/", views.evalset_detail, name="evalset"),
]
