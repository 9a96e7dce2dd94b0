"""Logging is configured once (``loopweb.logs.config``): Django's settings, gunicorn and the
standalone driver read the same configuration."""

import logging

from django.conf import settings

from loopweb import gunicorn_conf, logs


def test_django_and_gunicorn_are_given_the_same_configuration():
    assert settings.LOGGING == logs.config(settings.LOG_LEVEL)
    assert gunicorn_conf.logconfig_dict == logs.config()


def test_access_lines_are_off_unless_asked_for(monkeypatch):
    monkeypatch.delenv("LOG_ACCESS", raising=False)
    assert logs.config()["loggers"]["gunicorn.access"]["level"] == "WARNING"
    monkeypatch.setenv("LOG_ACCESS", "1")
    assert logs.config()["loggers"]["gunicorn.access"]["level"] == "INFO"


def test_the_standalone_driver_logs_through_the_same_formatter(monkeypatch):
    monkeypatch.setenv("LOG_FORMAT", "json")
    monkeypatch.delenv("LOG_LEVEL", raising=False)
    root = logging.getLogger()
    kept = root.handlers[:], root.level, logging.getLogger("loopweb").level
    try:
        logs.configure_standalone("DEBUG")
        assert isinstance(root.handlers[0].formatter, logs.JsonFormatter)
        assert logging.getLogger("loopweb").level == logging.DEBUG
    finally:
        root.handlers[:], level, own = kept
        root.setLevel(level)
        logging.getLogger("loopweb").setLevel(own)
