"""The use cases behind the verbs: each module runs one (a bisect, a comparison, a history) on the
layers below and returns a typed outcome; it never parses arguments, prints or exits (cli/ does),
and never formats a report (report/ does)."""
