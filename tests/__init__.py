"""cpplan's tests, organised like the code (``tests/io/`` tests ``cpplan/io/``)."""
