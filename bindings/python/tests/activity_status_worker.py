"""A worker for test_activity_status.py. "busy": enters the activity
"request" and inside it "db query", writes its pid to argv[2] and stays
inside both scopes until it is stopped. "idle": writes its pid and waits in
no activity."""
import os
import signal
import sys

import supervise


def report(path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (os.getpid(), supervise.activity_depth()))
    os.rename(tmp, path)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "busy":
        with supervise.activity("request"):
            with supervise.activity("db query"):
                report(path)
                while True:
                    signal.pause()  # until the daemon's SIGTERM
    report(path)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
