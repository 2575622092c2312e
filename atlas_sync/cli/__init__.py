"""The command line: thin click commands over the Python API."""
