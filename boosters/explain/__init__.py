"""What a trained model has learned: feature importance."""
