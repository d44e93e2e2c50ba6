"""The profile-guided searcher (Filipovič et al.): bottlenecks, reaction, scores, counter model."""
