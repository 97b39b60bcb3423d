"""Error-log counts: every error_log file of the config tailed, lines counted per interval."""
