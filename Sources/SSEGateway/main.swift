print("sse-gateway")
