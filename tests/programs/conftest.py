# The vendored programs are run as their authors run them (by test_real_programs.py, with torch
# served by tinytorch), not collected by this suite.
collect_ignore = ["vendor"]
