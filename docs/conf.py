"""Sphinx configuration of mcp_ref's documentation (``make docs``, built with -W: no warnings)."""

import mcp_ref

project = "mcp_ref"
author = "mcp_ref contributors"
copyright = "mcp_ref contributors, MIT licence"
version = release = mcp_ref.__version__

extensions = ["sphinx.ext.autodoc"]

# the reference documents the public names where users import them from
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# members a class inherits from another of mcp_ref's are shown with it (SqliteTaskStore's from the
# in-memory store); those of Python's and trio's own classes are not
autodoc_default_options = {
    "members": True,
    "show-inheritance": True,
    "inherited-members": "BaseException,Exception,Channel,Stream,AsyncResource,Protocol,Generic,int,Enum,object",
}
add_module_names = False

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_theme_options = {"description": "A Trio-native reference implementation of MCP 2025-11-25", "fixed_sidebar": True}
