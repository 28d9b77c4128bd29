"""Categorical features: the largest code a categorical feature may hold."""

# Codes 0 .. MAX_CATEGORIES - 1; with the missing bin, MAX_CATEGORIES + 1 = 65535 bins fit
# a uint16 column.
MAX_CATEGORIES = 65534
