collect_ignore = ["sdk"]  # the same app on the official SDK: compared and run by tests/examples/test_newcomer.py
