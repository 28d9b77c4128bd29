"""Model formats: encoding an Ensemble to bytes and decoding (and checking) it back."""
