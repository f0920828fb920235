# Nothing: the plugin comes from the installed wheel's entry point.
