"""Schemathesis hooks (loaded by run.sh through SCHEMATHESIS_HOOKS).

A tus PATCH (and a creation with data) sends `application/offset+octet-stream`:
raw bytes, which schemathesis does not generate on its own.
"""
from hypothesis import strategies as st
import schemathesis

schemathesis.openapi.media_type("application/offset+octet-stream", st.binary(max_size=256))
