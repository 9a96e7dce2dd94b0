"""``/api/webhooks/``: subscriptions, their delivery log, ping and redeliver. Each view parses,
calls one service or selector, and answers."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response

from loopweb.runs.api.permissions import IsOwner
from loopweb.webhooks import selectors, services
from loopweb.webhooks import serializers as s
from loopweb.webhooks.models import Subscription


class WebhookViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Owners register endpoints for their own ladders and proposals; staff may register
    deployment-wide ones. Anyone else's subscription answers 404."""

    serializer_class = s.SubscriptionSerializer
    permission_classes = [IsOwner]
    queryset = Subscription.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        return selectors.subscriptions_for(self.request.user).order_by("-created_at", "-id")

    def _input(self, request) -> s.SubscriptionInput:
        body = s.SubscriptionInput(data=request.data)
        body.is_valid(raise_exception=True)
        if body.validated_data["deploymentWide"] and not request.user.is_staff:
            self.permission_denied(request, "Only staff may register a deployment-wide webhook.")
        return body

    @extend_schema(request=s.SubscriptionInput, responses={201: s.CreatedSubscriptionSerializer})
    def create(self, request):
        body = self._input(request)
        subscription = services.create_subscription(owner=request.user, **body.as_fields())
        return Response(
            s.CreatedSubscriptionSerializer(subscription).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(request=s.SubscriptionInput, responses=s.SubscriptionSerializer)
    def update(self, request, pk=None):
        subscription = self.get_object()
        body = self._input(request)
        services.update_subscription(subscription=subscription, **body.as_fields())
        return Response(s.SubscriptionSerializer(subscription).data)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request, pk=None):
        services.delete_subscription(subscription=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.DeliverySerializer(many=True))
    def deliveries(self, request, pk=None):
        page = self.paginate_queryset(selectors.delivery_log(self.get_object()))
        return self.get_paginated_response(s.DeliverySerializer(page, many=True).data)

    @extend_schema(request=None, responses={202: s.DeliverySerializer})
    def ping(self, request, pk=None):
        delivery = services.ping(subscription=self.get_object())
        return Response(s.DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: s.DeliverySerializer})
    def redeliver(self, request, pk=None, delivery_id=None):
        subscription = self.get_object()
        delivery = get_object_or_404(subscription.deliveries, pk=delivery_id)
        again = services.redeliver(delivery=delivery)
        return Response(s.DeliverySerializer(again).data, status=status.HTTP_202_ACCEPTED)
