print("aseqosc")
