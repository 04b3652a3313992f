print("scenarios")
