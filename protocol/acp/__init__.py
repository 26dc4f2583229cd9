"""The Agent Client Protocol's side: the subset we speak, what an agent declares and sends, its options, usage, sign-in, and the facts we keep of it."""
