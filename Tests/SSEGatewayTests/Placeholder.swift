import Testing
@testable import SSEGateway

@Test func placeholderSSEGateway() {}
