using System;

namespace Demo
{
    /// <summary>
    /// A calculator.
    /// </summary>
    public class Calc
    {
        // plain comment
        public int Add(int a, int b) => a + b; // trailing

        /* block */
        [Fact]
        public void AddWorks()
        {
            var s = @"verbatim
string";
            Assert.Equal(3, Add(1, 2));
        }
    }
}
