/// Placeholder: the hub is written in Hub.swift.
public enum StreamHubModule {}
