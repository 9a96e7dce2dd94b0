"""Benchmarks: ``make bench`` (PostgreSQL). Each benchmark builds its data in bulk, runs warm,
and reports medians beside a floor measured in the same run. ``--smoke`` runs them small, as the
test suite does, so they cannot rot."""
