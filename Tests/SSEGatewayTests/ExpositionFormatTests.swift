import Testing

/// The test's exposition-format checker refuses what a scraper would.
struct ExpositionFormatTests {
    /// Valid text (counters, labels with escapes, a histogram) has no problems.
    @Test func validTextPasses() {
        let text = """
            # HELP a_total A.
            # TYPE a_total counter
            a_total{x="q\\"\\\\\\n"} 3
            # HELP h H.
            # TYPE h histogram
            h_bucket{le="1"} 1
            h_bucket{le="+Inf"} 2
            h_sum 2.5
            h_count 2

            """
        #expect(ExpositionFormat.problems(in: text) == [])
    }

    /// Each broken exposition is caught.
    @Test(arguments: [
        "m 1",  // no final line feed
        "m{a=\"x} 1\n",  // unterminated value
        "m{a=\"\\t\"} 1\n",  // an escape the format lacks
        "m one\n",
        "1m 1\n",
        "# TYPE m gauge\n# TYPE m gauge\nm 1\n",
        "m 1\n# TYPE m gauge\n",
        "# TYPE m gauge\nm 1\nn 1\nm{a=\"b\"} 2\n",
        "m 1\nm 2\n",
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",  // not cumulative
        "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",  // no +Inf
        "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",  // count differs
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",  // no sum
    ])
    func brokenTextIsCaught(text: String) {
        #expect(!ExpositionFormat.problems(in: text).isEmpty)
    }
}
