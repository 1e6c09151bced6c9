import Testing

@Test func placeholderStreamHub() {}
