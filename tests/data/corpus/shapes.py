import math


class Circle:
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius**2


class Square:
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side
