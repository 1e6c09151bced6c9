print("hub-bench")
