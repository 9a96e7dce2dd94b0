"""Running Loopweb in production: the task worker (recovery, chores, the queue, surviving a
lost database), health and metrics endpoints, sign-in throttling and the event log.

This app sits above every other one: it calls the substrate's, the gate's and the ladders' public
services, and nothing below imports it.
"""
