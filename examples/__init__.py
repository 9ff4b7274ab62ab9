"""Example code for ttgen."""
