"""Request messages from the SDK methods' arguments, one module per area, shared by the
asyncio and the blocking APIs."""
