"""The three contracts every implementation runs under: precision, correctness and timing."""
