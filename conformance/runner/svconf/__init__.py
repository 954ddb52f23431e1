"""svconf: the supervise.v1 conformance runner's library (no libsupervise).

Modules: sp (SP framing over AF_UNIX), schema (the .proto loaded at run
time), config (renders a case's neutral supervisor spec), expr (the small
value language of case files), agents (worker agents), steps (the step
vocabulary), runner (case loading, xfail lists, TAP report). Importing the
package itself imports nothing, so the worker agent can use sp alone.
"""
