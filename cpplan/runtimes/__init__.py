"""Runtimes, one module per runtime, both directions: the problem exactly as that runtime sees it
(its lifetimes, sizes, alignment) and the plan handed back in the runtime's own form."""
