"""The base every other part of `common` stands on: settings, errors, times, validation,
scopes, paging, metrics. Imports nothing else of KnowHub."""
